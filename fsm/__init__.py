"""The game and the round: pure rules of pai gow poker and of the table's round.

Responsible for cards, hand ranking, house way, settlement, pay tables, starting position and the
round's state machine. Must never do I/O, read a clock, start a thread or draw a random number of
its own: the clock and the random source are passed in by the caller.
"""
