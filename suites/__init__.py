"""lingprobe `suites`: edge probing, Holmes, curriculum NLI and CC, on `internals` and `probes`."""
