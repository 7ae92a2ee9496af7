"""The font of the table's single 7-segment number display: digits 1-7 and the status glyphs.

Responsible only for which segments each glyph of the round's vocabulary lights
(``fsm.round.vocabulary.GLYPHS``, the names the ``display`` effect carries); must never touch a pin
(the display device applies it). Segments are named as gpiozero names them, wired a..g::

         a
       ━━━━━
    f ┃     ┃ b
      ┃  g  ┃
       ━━━━━
    e ┃     ┃ c
      ┃     ┃
       ━━━━━ • dp
         d

The starting position 1-7 (NY 5324.41(h)(8)(ii), (j)(1): the number "selected and displayed by the
random number generator")::

               ━━━━━     ━━━━━               ━━━━━     ━━━━━     ━━━━━
          ┃         ┃         ┃   ┃     ┃   ┃         ┃               ┃
          ┃         ┃         ┃   ┃     ┃   ┃         ┃               ┃
               ━━━━━     ━━━━━     ━━━━━     ━━━━━     ━━━━━
          ┃   ┃               ┃         ┃         ┃   ┃     ┃         ┃
          ┃   ┃               ┃         ┃         ┃   ┃     ┃         ┃
               ━━━━━     ━━━━━               ━━━━━     ━━━━━
        1         2         3         4         5         6         7

The status glyphs (the round's vocabulary, fsm/round/vocabulary.py), chosen so that none can be
read as a digit 1-7::

                         ━━━━━     ━━━━━
              ┃         ┃         ┃     ┃
              ┃         ┃         ┃     ┃
     ━━━━━               ━━━━━     ━━━━━
              ┃         ┃         ┃
              ┃         ┃         ┃
               ━━━━━
       -         L         F         P        " "

- ``-`` idle: a single dash (segment g): the table is open and waiting.
- ``L`` locked: betting is locked out.
- ``F`` fault: the table is in Fault; a supervisor must clear it.
- ``P`` pending: a progressive hit waits for a supervisor to validate it (NY 5324.41(k)(3)(iii)).
- ``" "`` blank: every segment off; also the safe state.
The decimal point, if fitted, is never lit.
"""

from __future__ import annotations

from types import MappingProxyType

from drivers.gpio.interfaces import GLYPHS, Glyph

#: Segment states (a, b, c, d, e, f, g) of each glyph; 1 = lit.
SEGMENTS: MappingProxyType[Glyph, tuple[int, int, int, int, int, int, int]] = MappingProxyType(
    {
        #      a  b  c  d  e  f  g
        "1": (0, 1, 1, 0, 0, 0, 0),
        "2": (1, 1, 0, 1, 1, 0, 1),
        "3": (1, 1, 1, 1, 0, 0, 1),
        "4": (0, 1, 1, 0, 0, 1, 1),
        "5": (1, 0, 1, 1, 0, 1, 1),
        "6": (1, 0, 1, 1, 1, 1, 1),
        "7": (1, 1, 1, 0, 0, 0, 0),
        "-": (0, 0, 0, 0, 0, 0, 1),
        "L": (0, 0, 0, 1, 1, 1, 0),
        "F": (1, 0, 0, 0, 1, 1, 1),
        "P": (1, 1, 0, 0, 1, 1, 1),
        " ": (0, 0, 0, 0, 0, 0, 0),
    }
)

assert tuple(SEGMENTS) == GLYPHS, "every glyph needs exactly one drawing"
