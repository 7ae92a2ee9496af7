"""The service: wiring, the owner event loop, journal and meters, configuration, floor link, CLI.

Must never hold game rules (those live in `fsm`) nor touch a pin or a serial port directly (those
live in `drivers`).
"""
