"""Names vulture (`make lint`) reports as unused that are used where it cannot see: read by
frameworks, part of a record or an interface, or documentation constants. Each group says why.
Not imported by anything; vulture reads it with the sources. Remove a name here once its code is
gone; add one only with its reason."""

# ruff: noqa
# fmt: off

# Called by a framework: signal handlers' and context managers' parameters, tornado's handler
# hooks, gpiozero's edge callbacks, pytest's module marks, configparser's key folding, sqlite3's
# text factory, the SAS host of sas-comm-py.
signum
exc_type
tb
status_code
_.initialize
_.prepare
_.set_default_headers
_.write_error
_.on_message
_.on_close
_.when_deactivated
_.text_factory
_.optionxform
_.get_serial_number
pytestmark
pytest_collection_modifyitems

# Record fields (fsm/round/events.py, effects.py): parsed from and written to the journal, read
# by reports and exports through the record's JSON form.
validated_by
display_before_cents
queen_dragon
pai_gow_wagers
restored_seq
clock_synced
unjournaled
previous_key_id  # meters_carried: read by verify --previous (controller/service/carry.py) from the data
openings  # door_changed: the SAS door meter, the page (issue 28 item 4)
maintenance  # door_changed: who allowed play with the door open
pays_line
owed_cents
PlayComplete  # registered by @event: the machine steps it by its name
REJECT_CAUSES  # the catalogue of rejected.cause (docs)
effects_json
iter_fields

# Fields of configuration and status dataclasses, filled by their readers and shown as a whole
# (configuration keys, the link's and SAS link's status and counters, par sheet rows).
dispense_timeout
shuffle_timeout
stop_after
connected
pool_seen_ns
resends
nacks
chirps
other_address
_.answered
_.posted_errors
_.handler_errors
_._open
insurance
classes
expanded
family
dirty_sectors

# Interfaces: what a device or adapter offers whether or not this release calls it.
DEVICE
_.card_count
_.is_pressed
_.inject_spec  # docs/device-protocol.md shows it
Inputs  # the page's view of the simulated table's pins (a Protocol)

# Documentation constants: the pins left free and the SAS meter code they name.
ID_EEPROM_PINS
I2C_PINS
ATTENDANT_PROGRESSIVE

# The lab's evidence (controller/lab/rng_evidence.py): dieharder's result columns kept in the
# report's JSON, and its documented FAILED threshold (the report quotes dieharder's own verdict).
ntup
tsamples
DIEHARDER_FAILED

# An event record of the vocabulary that the round posts to itself as an envelope
# (fsm/round/phases/settle.py); its class is the record the journal's readers parse it with.
RoundCompleted

# A package's module-level __getattr__ (PEP 562): Python calls it for a name imported lazily
# (fsm/round/__init__.py, drivers/gpio/__init__.py: `tablectl config check` imports neither the
# round machine nor gpiozero).
__getattr__
