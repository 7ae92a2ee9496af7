"""`make conformance`: every "implemented" row of docs/conformance.md can fail (issue 24 item 8).

For each such row a mutant (tests/conformance/mutants.py: a named text patch that breaks the row's
rule) is applied in a temporary copy of the tree and the row's cited tests are run there; at least
one must fail. Never imported by the controller; never writes to the checkout it tests.
"""
