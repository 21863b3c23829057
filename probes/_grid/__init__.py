"""The probe trainers' machinery: private, with no promise that a name stays.

`fit_probes` and `fit_logistic_regression` (in `probes`) are built from these parts: input
checks (`inputs`), the layout of the grid's features in memory (`blocks`, `block_inputs`,
`masks`, `memory_budget`), the minibatch loop's schedule and fused steps (`chunk_schedule`,
`fused_steps`, `optim`, `onednn_matmul`, `torchscript`), keyed random streams (`streams`,
`resampling`), worker threads (`workers`), features read from disk (`site_groups`,
`site_reader`, `item_stream`, `feature_set_fit`, `logistic_feature_set`), batched L-BFGS
(`lbfgs`, `logistic_objective`), exact integer products (`whole_counts`) and the settings'
rules (`field_rules`). What a user may rely on is exported from `probes`, `probes.stats`,
`probes.structural` and `probes.erasure`; this package's `__init__` imports nothing, so the
trainer's modules import each other without loading the rest.
"""
