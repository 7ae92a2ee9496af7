"""The table's page: the virtual table on the simulated table, the pit's status page on the Pi.

``config`` reads ``[web]``; ``view`` turns a published snapshot and committed journal entries into
the page's frames (pure, no card before its round resolves); ``feed`` follows the owner's
publications and keeps the latest frame per browser; ``auth`` holds the supervisor sessions;
``routes`` are the Tornado handlers; ``server`` runs Tornado on its own thread and event loop.
Nothing here may touch the round machine or write the journal: the page reads, and posts events.
"""
