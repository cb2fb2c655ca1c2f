"""protomesh.conformance"""
