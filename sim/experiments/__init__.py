"""protomesh.experiments"""
