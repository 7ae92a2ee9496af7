"""controller/console"""
