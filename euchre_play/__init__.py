"""play.py's pieces: the referee table shared by the terminal and web front ends, and those front ends."""
