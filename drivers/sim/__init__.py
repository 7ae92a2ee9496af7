"""Simulators of the table's serial devices (shoe, shuffler) speaking the device side of the
reference protocol over real pseudo-terminals, with fault injection.

Simulation only: the shuffler's random order comes from a seeded ``random.Random`` and must never
be used for anything a player's money depends on outside the simulated table.
"""
