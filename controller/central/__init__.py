"""The floor's page served from the centre (``tablectl central serve``, docs/link.md "The floor's
page"): ``floor_config`` reads its file; ``tiles`` folds a table's shipped entries into its tile
and alarms (pure); ``store`` is its PostgreSQL side (reads central ingest's tables, writes only
its acknowledgements and sign-in refusals); ``floor`` holds the live state fed by NATS, PostgreSQL
and the pools' bucket; ``shift`` arranges `central report shift`'s figures by section; ``server``
is Tornado. Nothing here writes a table's journal, central ingest's tables or the stream.
"""
