"""Calibration (SPEC §13): a scenario's link latencies, service times, error
probabilities, translation delays and approval latencies fitted to traces.

``measure`` takes the samples from SPEC §5 traces, ``fit`` chooses each duration's law
(exponential, lognormal, gamma by maximum likelihood, then the lowest Kolmogorov–Smirnov
distance; constant and empirical quantiles where they fit better), ``calibration`` ties
each measurement to its scenario field, ``write`` writes the scenario with the fitted
values and ``report`` the fit report. The method: docs/calibrate.md. scipy and
matplotlib are imported once the traces are read.
"""
