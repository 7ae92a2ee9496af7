"""controller/sim"""
