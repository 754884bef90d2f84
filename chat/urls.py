from django.urls import path

from chat import views

urlpatterns = [
    path("chat/", views.chat_page, name="chat"),
    path("chat/<int:conversation_id>/", views.conversation_page, name="chat-conversation"),
    path("chat/<int:conversation_id>/export.md", views.conversation_export, name="chat-conversation-export"),
]
