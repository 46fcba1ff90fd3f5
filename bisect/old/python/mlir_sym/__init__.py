"""mlir_sym: a torch.compile backend on MLIR with first-class dynamic shapes.

Stages (one module each): capture -> importer -> passes -> pipelines -> runtime -> backend.
`torch.compile(model, backend="mlir_sym")` finds the backend through the `torch_dynamo_backends`
entry point; importing this package is not needed.
"""
__version__ = "0.1.0"
