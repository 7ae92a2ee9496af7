"""SAS in the gaming-machine role: the floor link (docs/sas.md)."""
