"""Password reset that tells the truth: a mail the server refuses is an error, not "sent"."""
from __future__ import annotations

from django.contrib.auth.forms import PasswordResetForm
from django.core.mail import EmailMultiAlternatives
from django.template import loader


class TruthfulPasswordResetForm(PasswordResetForm):
    """Django's form logs a failed send and reports success; this one lets the failure through
    so the page can say that nothing was sent (docs/production.md "Email")."""

    connection = None  # the view's open mail connection, shared by every message of one request

    def send_mail(self, subject_template_name, email_template_name, context, from_email, to_email,
                  html_email_template_name=None) -> None:
        subject = "".join(loader.render_to_string(subject_template_name, context).splitlines())
        body = loader.render_to_string(email_template_name, context)
        message = EmailMultiAlternatives(subject, body, from_email, [to_email], connection=self.connection)
        if html_email_template_name is not None:
            message.attach_alternative(loader.render_to_string(html_email_template_name, context), "text/html")
        message.send()
