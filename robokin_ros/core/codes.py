"""Outcome codes: numbered as an interface's constants, each with the sentence a person reads."""
from __future__ import annotations

import enum


class SentencedCode(enum.IntEnum):
    """An IntEnum whose members are declared as `NAME = number, "sentence"`.

    The number is the member's value (equal to the .msg/.action constant of the same name, which a test
    checks); `sentence` says what the code means, without details such as joint names (callers add those).
    """

    sentence: str

    def __new__(cls, value: int, sentence: str) -> SentencedCode:
        member = int.__new__(cls, value)
        member._value_ = value
        member.sentence = sentence
        return member
