"""What a test lab asks of the controller beyond the game's rules (issue 28): the production
RNG's output and its statistics, and the on-demand software digest.

Each module here reads the production parts (the RNG's source and scaling, the approved files)
through the same functions the table uses; none of them writes a journal or plays a round.
"""
