"""Report stage: paper-comparison tables, figures, provenance manifests."""
