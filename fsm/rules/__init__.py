"""fsm/rules"""
