"""Learning from one demonstration: demonstration records, MICA segmentation, a demonstration memory."""
