"""controller/journal"""
