"""protomesh.engine"""
