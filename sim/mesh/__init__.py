"""protomesh.mesh"""
