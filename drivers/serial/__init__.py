"""Serial devices of the table: the dealing shoe and the card shuffler, over a framed link.

Layers, one concern per module: ``crc`` (CRC-16/CCITT-FALSE), ``frame`` (wire layout and the
resynchronising parser), ``link`` (ACK/NAK, retransmission, heartbeat, duplicate suppression; no
I/O, time passed in), ``port`` (pyserial, reader thread, reopen with backoff), ``shoe`` and
``shuffler`` (device adapters posting events), ``faults`` (every fault code), ``fakes``
(in-memory devices). This package must never decide a game rule or import from ``controller``.
"""
