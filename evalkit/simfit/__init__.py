"""A simulated model fitted to a real one: each recorded call classified (`classify`), the profile's
parameters fitted (`fit`), its predictions checked cell by cell (`check`), power by simulation."""
