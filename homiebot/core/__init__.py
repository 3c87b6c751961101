"""The core layer: contracts, parsing, errors, robot and camera geometry, the World interface, tasks, scenes,
attempt checks, records, prompts, the plugin registry. It imports nothing above it (see the layers in setup.cfg)."""
