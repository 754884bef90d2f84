"""OCR of scans and images, offline: RapidOCR on ONNX Runtime (``rapidocr-onnxruntime``).

Its PP-OCR detection and Chinese+English recognition models ship inside the wheel, so nothing
is downloaded at run time and nothing outside ``requirements.txt`` is installed (the Debian
``tesseract-ocr`` route needs apt on every machine and reads Chinese worse). One engine per
process, loaded on first use (~0.2 s), shared under a lock: ONNX Runtime already uses the cores.
"""
from __future__ import annotations

import threading

import numpy as np

# RapidOCR's recognition scores below this are noise (speckles read as characters).
OCR_MIN_SCORE = 0.5
# Boxes whose tops are within this many pixels are one line, read left to right.
OCR_LINE_TOLERANCE_PX = 12

_engine = None
_lock = threading.Lock()


def _get_engine():
    global _engine
    if _engine is None:
        from rapidocr_onnxruntime import RapidOCR

        _engine = RapidOCR()
    return _engine


def read_text(image) -> str:
    """The text of a PIL image, line by line in reading order ("" when none is found)."""
    with _lock:
        result, _ = _get_engine()(np.asarray(image.convert("RGB")))
    if not result:
        return ""
    boxes = [(min(p[1] for p in box), min(p[0] for p in box), text)
             for box, text, score in result if float(score) >= OCR_MIN_SCORE and text.strip()]
    boxes.sort()
    lines: list[list[tuple[float, str]]] = []
    last_top = None
    for top, left, text in boxes:
        if last_top is None or top - last_top > OCR_LINE_TOLERANCE_PX:
            lines.append([])
            last_top = top
        lines[-1].append((left, text))
    return "\n".join(" ".join(text for _, text in sorted(line)) for line in lines)
