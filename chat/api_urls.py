from django.urls import path

from chat import apis

urlpatterns = [
    path("conversations/", apis.ConversationListApi.as_view(), name="api-conversation-list"),
    path(
        "conversations/<int:conversation_id>/messages/",
        apis.ConversationMessagesApi.as_view(),
        name="api-conversation-messages",
    ),
]
