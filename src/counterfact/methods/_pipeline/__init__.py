"""The explain pipeline shared by every method."""
