"""Instruction set placeholder (filled below)."""
