"""What builds data offline: benchmark suites, recorded demonstrations, rebuilt views of finished runs."""
