"""controller/service"""
