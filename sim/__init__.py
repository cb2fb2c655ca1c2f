"""protomesh: a discrete-event simulator of multi-protocol AI-agent meshes."""

__version__ = "0.1.0"
