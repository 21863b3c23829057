"""lingprobe `suites`: research suites (edge probing, Holmes, curriculum NLI, CC) on `internals` and `probes`."""
