"""Everything that touches table hardware, each device behind a small interface with a fake.

GPIO devices (acceptors, lock-out, dealer panel, shaker, number display) and serial devices (shoe,
shuffler) with their link layer and simulators. Must never import from `controller` or decide a
game rule: callbacks only post events for the owner thread.
"""
