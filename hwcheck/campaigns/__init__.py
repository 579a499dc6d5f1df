"""Many inputs or programs at once: instruction campaigns, MUFU probes, PTX fuzzing, acceptance, Ray."""
