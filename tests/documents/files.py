"""Real files for the document tests, made with the libraries (PDF objects written out with
their cross-reference table, images with Pillow, DOCX with python-docx, e-mail with ``email``)."""
from __future__ import annotations

import glob
import io
import zipfile
from email.message import EmailMessage

from PIL import Image, ImageDraw, ImageFont


def _pdf(objects: list[bytes], *, trailer_extra: bytes = b"") -> bytes:
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R %s>>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, trailer_extra, xref))
    return out.getvalue()


def text_pdf(pages: list[list[str]], *, encrypted: bool = False) -> bytes:
    """A PDF with a text layer (Helvetica, ASCII): each page a list of lines."""
    count = len(pages)
    kids = b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(count))
    objects = [b"<< /Type /Catalog /Pages 2 0 R >>",
               b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, count),
               b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"]
    for i, lines in enumerate(pages):
        content = b"BT /F1 11 Tf 14 TL 60 780 Td " + b" ".join(
            b"(%s) '" % line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")
            for line in lines) + b" ET"
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
                       b"/Contents %d 0 R >>" % (5 + 2 * i))
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    extra = b""
    if encrypted:
        objects.append(b"<< /Filter /Standard /V 1 /R 2 /Length 40 /P -44 /O <" + b"ab" * 32 + b"> /U <" + b"cd" * 32 + b"> >>")
        extra = b"/Encrypt %d 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>] " % len(objects)
    return _pdf(objects, trailer_extra=extra)


def chinese_text_pdf(pages: list[list[str]]) -> bytes:
    """A PDF whose text layer is Chinese: Adobe's STSong-Light through the UniGB-UCS2-H CMap (a
    font every PDF reader knows, not embedded), each page a list of lines."""
    kids = b" ".join(b"%d 0 R" % (5 + 2 * i) for i in range(len(pages)))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(pages)),
        b"<< /Type /Font /Subtype /Type0 /BaseFont /STSong-Light /Encoding /UniGB-UCS2-H /DescendantFonts [4 0 R] >>",
        b"<< /Type /Font /Subtype /CIDFontType0 /BaseFont /STSong-Light /CIDSystemInfo << /Registry (Adobe) "
        b"/Ordering (GB1) /Supplement 2 >> /FontDescriptor << /Type /FontDescriptor /FontName /STSong-Light "
        b"/Flags 6 /FontBBox [-25 -254 1000 880] /ItalicAngle 0 /Ascent 880 /Descent -120 /CapHeight 880 "
        b"/StemV 93 >> >>",
    ]
    for i, lines in enumerate(pages):
        content = b"BT /F1 12 Tf 18 TL 50 780 Td " + b" ".join(
            b"<%s> '" % line.encode("utf-16-be").hex().encode() for line in lines) + b" ET"
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 3 0 R >> >> "
                       b"/Contents %d 0 R >>" % (6 + 2 * i))
        objects.append(b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream")
    return _pdf(objects)


def cjk_font(size: int = 34):
    fonts = sorted(glob.glob("/usr/share/fonts/**/NotoSansCJK-Regular.ttc", recursive=True)
                   + glob.glob("/usr/share/fonts/**/*CJK*.tt*", recursive=True))
    return ImageFont.truetype(fonts[0], size) if fonts else None


def scan_image(lines: list[str], *, size: tuple[int, int] = (1240, 600)) -> Image.Image:
    """A white page with these lines written on it (Chinese needs fonts-noto-cjk)."""
    image = Image.new("RGB", size, "white")
    draw = ImageDraw.Draw(image)
    font = cjk_font() or ImageFont.load_default(34)
    for index, line in enumerate(lines):
        draw.text((50, 50 + 70 * index), line, fill="black", font=font)
    return image


def image_bytes(image: Image.Image, fmt: str = "PNG") -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt)
    return out.getvalue()


def scanned_pdf(pages: list[list[str]]) -> bytes:
    """A PDF of page images only (no text layer), as a scanner makes it."""
    images = [scan_image(lines) for lines in pages]
    out = io.BytesIO()
    images[0].save(out, format="PDF", save_all=True, append_images=images[1:])
    return out.getvalue()


def docx_bytes(heading: str, paragraphs: list[str]) -> bytes:
    import docx

    document = docx.Document()
    document.add_heading(heading, level=1)
    for paragraph in paragraphs:
        document.add_paragraph(paragraph)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def zip_bomb_docx() -> bytes:
    """A "DOCX" whose one part unzips to 400 MB of zeros (a few hundred KB packed)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("word/document.xml", "w", force_zip64=True) as part:
            block = b"\0" * (1024 * 1024)
            for _ in range(400):
                part.write(block)
    return out.getvalue()


def eml_bytes(*, subject: str, body: str, attachments: list[tuple[str, bytes, str]] = ()) -> bytes:
    message = EmailMessage()
    message["From"] = "王律师 <wang@example.com>"
    message["To"] = "client@example.com"
    message["Date"] = "Mon, 02 Mar 2026 10:00:00 +0800"
    message["Subject"] = subject
    message.set_content(body)
    for filename, content, mime in attachments:
        maintype, subtype = mime.split("/")
        message.add_attachment(content, maintype=maintype, subtype=subtype, filename=filename)
    return bytes(message)
