"""What a file is (by its bytes, checked against its extension) and its text, page by page.

Libraries, not parsers of our own: pypdfium2 (PDFium) for PDF text layers and page images,
python-docx for DOCX, the standard ``email`` package for ``.eml``, Pillow for images, and
RapidOCR (``documents.ocr``) for scans. Every refusal is a ``DocumentRejected`` with a
reason a lawyer can read; it leaves nothing written.
"""
from __future__ import annotations

import codecs
import email
import email.policy
import io
import re
import warnings
import zipfile
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Callable

from documents.models import Document

# Limits of what one document may make the worker do (docs/documents.md, "Bad input").
MAX_PAGES = 2000                  # a longer PDF is refused before any page is read
MAX_IMAGE_PIXELS = 60_000_000     # an image (or a rendered page) larger than this is a decompression bomb
MAX_UNZIPPED_BYTES = 300 * 1024 * 1024  # a DOCX whose parts unzip to more than this is a zip bomb
MAX_ZIP_RATIO = 200               # … or whose parts unzip to more than 200× their compressed size
OCR_MIN_TEXT_CHARS = 20           # a PDF page with less text than this is treated as a scan
OCR_RENDER_SCALE = 2.0            # 144 dpi: RapidOCR's detector reads body text well at this size

EXTENSIONS: dict[str, str] = {
    ".pdf": Document.Kind.PDF,
    ".png": Document.Kind.IMAGE, ".jpg": Document.Kind.IMAGE, ".jpeg": Document.Kind.IMAGE,
    ".tif": Document.Kind.IMAGE, ".tiff": Document.Kind.IMAGE, ".bmp": Document.Kind.IMAGE,
    ".webp": Document.Kind.IMAGE,
    ".docx": Document.Kind.DOCX,
    ".eml": Document.Kind.EMAIL,
    ".txt": Document.Kind.TEXT, ".md": Document.Kind.TEXT, ".markdown": Document.Kind.TEXT,
}


class DocumentRejected(ValueError):
    """The file cannot become memory; the message is the reason shown on the document."""


@dataclass
class Page:
    text: str
    by_ocr: bool = False


@dataclass
class Attachment:
    filename: str
    content: bytes


@dataclass
class Extracted:
    pages: list[Page]
    headers: dict[str, str] = field(default_factory=dict)
    attachments: list[Attachment] = field(default_factory=list)


def kind_of(filename: str, head: bytes) -> str:
    """The document kind, from the extension, confirmed by the file's first bytes."""
    extension = Path(filename).suffix.lower()
    kind = EXTENSIONS.get(extension)
    if kind is None:
        raise DocumentRejected(
            f"unsupported file type {extension or '(no extension)'}; accepted: {', '.join(sorted(EXTENSIONS))}")
    sniffed = _sniff(head)
    if kind in (Document.Kind.PDF, Document.Kind.IMAGE, Document.Kind.DOCX) and sniffed != kind:
        found = f"a {sniffed} file" if sniffed else "not a file of that type"
        raise DocumentRejected(f"the extension says {extension} but the content is {found}")
    if kind in (Document.Kind.TEXT, Document.Kind.EMAIL) and sniffed in (Document.Kind.PDF, Document.Kind.IMAGE,
                                                                         Document.Kind.DOCX):
        raise DocumentRejected(f"the extension says {extension} but the content is a {sniffed} file")
    return kind


def _sniff(head: bytes) -> str:
    if head.startswith(b"%PDF-"):
        return Document.Kind.PDF
    if head.startswith(b"PK\x03\x04"):
        return Document.Kind.DOCX
    if (head.startswith(b"\x89PNG") or head.startswith(b"\xff\xd8\xff") or head[:4] in (b"II*\x00", b"MM\x00*")
            or head.startswith(b"BM") or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")):
        return Document.Kind.IMAGE
    return ""


def extract(path: Path, kind: str, *, on_ocr: Callable[[], None] = lambda: None) -> Extracted:
    """The text of the file, page by page (``on_ocr`` is called once before the first OCR)."""
    readers = {
        Document.Kind.PDF: _pdf, Document.Kind.IMAGE: _image, Document.Kind.DOCX: _docx,
        Document.Kind.EMAIL: _email, Document.Kind.TEXT: _text,
    }
    extracted = readers[kind](path, on_ocr)
    for page in extracted.pages:
        page.text = clean_text(page.text)
    if not any(page.text.strip() for page in extracted.pages):
        if kind in (Document.Kind.PDF, Document.Kind.IMAGE):
            raise DocumentRejected("no text found: the scan is empty or unreadable")
        raise DocumentRejected("the file holds no text")
    return extracted


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff]")


def clean_text(text: str) -> str:
    """NUL and other control characters out (PostgreSQL stores no NUL), line ends unified."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


# --- PDF ----------------------------------------------------------------------------------------

def _pdf(path: Path, on_ocr: Callable[[], None]) -> Extracted:
    import pypdfium2 as pdfium

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as error:
        message = str(error).lower()
        if "password" in message:
            raise DocumentRejected("the PDF is encrypted (password protected); upload an unprotected copy")
        raise DocumentRejected(f"the PDF is damaged or truncated and cannot be opened ({error})")
    try:
        count = len(pdf)
        if count == 0:
            raise DocumentRejected("the PDF has no pages")
        if count > MAX_PAGES:
            raise DocumentRejected(f"the PDF has {count} pages; at most {MAX_PAGES} are accepted")
        pages: list[Page] = []
        ocr_started = False
        for index in range(count):
            page = pdf[index]
            text = page.get_textpage().get_text_range()
            if len(text.strip()) >= OCR_MIN_TEXT_CHARS:
                pages.append(Page(text))
                continue
            width, height = page.get_size()
            if width * height * OCR_RENDER_SCALE ** 2 > MAX_IMAGE_PIXELS:
                raise DocumentRejected(f"page {index + 1} is too large to read")
            if not ocr_started:
                on_ocr()
                ocr_started = True
            image = page.render(scale=OCR_RENDER_SCALE).to_pil()
            pages.append(Page(_ocr(image) or text, by_ocr=True))
        return Extracted(pages)
    finally:
        pdf.close()


# --- images -------------------------------------------------------------------------------------

def _image(path: Path, on_ocr: Callable[[], None]) -> Extracted:
    from PIL import Image, UnidentifiedImageError

    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as image:
                if image.width * image.height > MAX_IMAGE_PIXELS:
                    raise DocumentRejected(
                        f"the image is {image.width}×{image.height} pixels: too large (decompression bomb?)")
                image.load()
                on_ocr()
                return Extracted([Page(_ocr(image.convert("RGB")), by_ocr=True)])
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise DocumentRejected("the image is too large to open safely (decompression bomb?)")
    except (UnidentifiedImageError, OSError, SyntaxError) as error:
        raise DocumentRejected(f"the image is damaged or truncated ({error})")


def _ocr(image) -> str:
    from documents.ocr import read_text

    return read_text(image)


# --- DOCX ---------------------------------------------------------------------------------------

def check_zip(path: Path) -> None:
    """Refuse a zip whose parts would unzip to too much (a zip bomb) or that is damaged."""
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, OSError) as error:
        raise DocumentRejected(f"the DOCX is damaged or truncated ({error})")
    unzipped = sum(info.file_size for info in infos)
    packed = sum(info.compress_size for info in infos) or 1
    if unzipped > MAX_UNZIPPED_BYTES or unzipped / packed > MAX_ZIP_RATIO:
        raise DocumentRejected(
            f"the DOCX would unzip to {unzipped // (1024 * 1024)} MB from {packed // 1024} KB (zip bomb?)")


def _docx(path: Path, on_ocr: Callable[[], None]) -> Extracted:
    """Paragraphs and tables in the order they stand, cut into pages where the file says a page
    ends (``DocxPages``)."""
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    check_zip(path)
    try:
        document = docx.Document(str(path))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile) as error:
        raise DocumentRejected(f"not a readable DOCX ({error})")
    pages = DocxPages()
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            for row in block.rows:
                pages.add_line(" | ".join(cell.text.strip() for cell in row.cells))
        else:
            style = (block.style.name if block.style is not None else "") or ""
            heading = style.lower().startswith(("heading", "title"))
            pages.add_paragraph(block._p, heading=heading, break_before=bool(block.paragraph_format.page_break_before))
    return Extracted([Page(text) for text in pages.texts()])


_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


class DocxPages:
    """A DOCX has no pages of its own: Word lays them out when it opens the file. The file does
    say where a page ends by hand (a page break, "page break before" on a paragraph), and Word
    saves where its last layout broke the pages (``w:lastRenderedPageBreak``) — the pages the
    author saw, which a lawyer cites. Both start a new page here; a break on a page with no
    text yet is the same break said twice (Word writes a rendered break right after a hard one)
    and is not counted. A file written by a tool that records neither is one page."""

    def __init__(self) -> None:
        self.pages: list[list[str]] = [[]]
        self.fragment: list[str] = []

    def add_line(self, text: str) -> None:
        if text.strip():
            self.pages[-1].append(text.strip())

    def add_paragraph(self, paragraph, *, heading: bool, break_before: bool) -> None:
        if break_before:
            self.break_page()
        self.fragment = ["# "] if heading else []
        for element in paragraph.iter():
            tag = element.tag
            if tag == f"{_W}t":
                self.fragment.append(element.text or "")
            elif tag == f"{_W}tab":
                self.fragment.append("\t")
            elif tag == f"{_W}br" and element.get(f"{_W}type") == "page" or tag == f"{_W}lastRenderedPageBreak":
                self.break_page()
                self.fragment = ["# "] if heading else []
            elif tag in (f"{_W}br", f"{_W}cr"):
                self.fragment.append("\n")
        self._end_fragment()

    def break_page(self) -> None:
        self._end_fragment()
        if self.pages[-1]:
            self.pages.append([])

    def _end_fragment(self) -> None:
        text = "".join(self.fragment)
        if text.removeprefix("# ").strip():
            self.pages[-1].append(text.strip())
        self.fragment = []

    def texts(self) -> list[str]:
        pages = ["\n\n".join(lines) for lines in self.pages]
        return pages[:-1] if len(pages) > 1 and not pages[-1] else pages


# --- e-mail -------------------------------------------------------------------------------------

HEADER_NAMES = ("From", "To", "Cc", "Date", "Subject")


class _HTMLText(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)

    def handle_starttag(self, tag, attrs) -> None:
        if tag in ("p", "br", "div", "li", "tr", "h1", "h2", "h3"):
            self.parts.append("\n")


def _email(path: Path, on_ocr: Callable[[], None]) -> Extracted:
    raw = path.read_bytes()
    message = email.message_from_bytes(raw, policy=email.policy.default)
    headers = {name: str(message[name]) for name in HEADER_NAMES if message[name] is not None}
    if not headers:
        raise DocumentRejected("not an e-mail: no From, To, Date or Subject header")
    body = message.get_body(preferencelist=("plain", "html"))
    text = _part_text(body) if body is not None else ""
    if body is not None and body.get_content_type() == "text/html":
        parser = _HTMLText()
        parser.feed(text)
        text = "".join(parser.parts)
    attachments = [
        Attachment(part.get_filename() or f"attachment-{index}", part.get_payload(decode=True) or b"")
        for index, part in enumerate(message.iter_attachments(), start=1)
        if part.get_filename()
    ]
    head = "\n".join(f"{name}: {value}" for name, value in headers.items())
    return Extracted([Page(f"{head}\n\n{text.strip()}")], headers=headers, attachments=attachments)


def _part_text(part) -> str:
    try:
        return part.get_content()
    except (LookupError, UnicodeDecodeError):  # an unknown or wrong charset: decode what we can
        return decode_text(part.get_payload(decode=True) or b"", strict=False)


# --- text ---------------------------------------------------------------------------------------

def decode_text(raw: bytes, *, strict: bool = True) -> str:
    """UTF-8 (with or without BOM), UTF-16 with a BOM, or GB18030 (GBK, GB2312) — else refused."""
    if raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return raw.decode("utf-16")
    for encoding in ("utf-8-sig", "gb18030"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    if strict:
        raise DocumentRejected("unknown text encoding: save the file as UTF-8 (or GBK) and upload it again")
    return raw.decode("utf-8", errors="replace")


def _text(path: Path, on_ocr: Callable[[], None]) -> Extracted:
    raw = path.read_bytes()
    if b"\x00" in raw and not raw.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        raise DocumentRejected("the text file contains NUL bytes: it is binary, not text")
    return Extracted([Page(decode_text(raw))])
