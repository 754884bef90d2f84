"""English category cues and the small talk the engine drops.

Same shape as the Chinese table in ``lexicon.CATEGORY_CUES`` (and merged with it by
the engine, so mixed Chinese/English text is scored by both): a strong cue classifies a
sentence on its own, a weak one only tips the balance. Patterns are case-insensitive
alternations of whole words without nested quantifiers.
"""

from __future__ import annotations

import re

from legaltext.acts import EN_QUESTION_RE

from ..lexicon import ACTION, CLAIM, EVIDENCE, FACT, LAW, PREFERENCE, STRONG, Cue


def _cues(weight: int, *patterns: str) -> tuple[Cue, ...]:
    return tuple(Cue(re.compile(rf"\b(?:{p})\b", re.IGNORECASE), weight) for p in patterns)


_I = r"(?:i|i'm|i've|i'd|we|we're|we've)"
#: Common irregular past tenses of everyday events ("went", "bought", "met").
_PAST = (
    r"went|bought|paid|sold|signed|got|gave|took|made|met|saw|began|started|finished|moved|joined|left|"
    r"visited|attended|adopted|married|graduated|received|sent|lost|won|found|hired|fired|quit|broke|"
    r"spent|ran|flew|drove|wrote|read|built|painted|baked|cooked|bought|rented|booked|ordered|returned|"
    r"called|emailed|texted|told|asked|decided|tried|learned|learnt|taught|celebrated|had|was|were"
)

CATEGORY_CUES: dict[str, tuple[Cue, ...]] = {
    PREFERENCE: _cues(
        STRONG,
        rf"{_I}\s+(?:really\s+|absolutely\s+|just\s+|also\s+)?(?:love|like|enjoy|prefer|adore|hate|dislike)",
        r"(?:i'm|i am|we're|we are)\s+(?:a\s+(?:big\s+|huge\s+)?fan\s+of|into|passionate\s+about|obsessed\s+with)",
        r"(?:my|our)\s+favou?rites?", r"can't stand", r"don't like", r"do not like",
        r"bullet points?", r"be (?:brief|concise)", r"(?:short|shorter|concise) (?:answers?|replies)",
        r"(?:in|from now on|in the) future,? (?:please )?(?:always|answer|reply|give|start)",
        r"always (?:start|give|answer|reply) with", r"conclusion first", r"plain english",
    )
    # how the client wants to be reached or answered: "communicate by email only", "please reply in
    # English", "email is fine for all future communication", "no phone calls"
    + _cues(
        3,
        r"(?:communicate|contact (?:me|us|him|her|them)|reach (?:me|us)) (?:by|via|through|on) (?:email|e-mail|text|phone|wechat)",
        r"(?:reply|answer|respond|write)(?: to me| to us)? in (?:english|chinese|german)",
        r"\b(?:english|chinese|german),? please\b", r"\bin (?:english|chinese|german),? please\b",
        r"\b(?:terms|words|documents) in (?:english|chinese)\b",
        r"(?:email|e-mail|text|wechat) is (?:fine|best|better|preferred) for",
        r"(?:no|don't|do not|please don't) (?:phone )?call", r"(?:by|via) (?:email|e-mail) only",
    )
    + _cues(1, r"love", r"favou?rite", r"prefer", r"always", r"usually", r"every (?:day|week|morning|weekend)"),
    CLAIM: _cues(
        STRONG,
        r"(?:want|demand|demanding|seek|seeking|claim|claiming)\s+(?:a\s+|my\s+|our\s+|full\s+)*(?:refund|compensation|damages|money back|reimbursement)",
        r"(?:want|get|demand) (?:my|our|the|all (?:my|our|the)) \w+ back", r"sue (?:them|him|her|the \w+) for", r"entitled to", r"demand(?:ed|ing)? (?:that|payment)",
        r"(?:pay|give) (?:me|us) back",
    )
    # what the client wants of the dispute: "would like to settle this without going to court"
    + _cues(3, r"(?:would like|['’]d like|want|wants|prefer|prefers|hope|hopes) to settle", r"without going to court")
    + _cues(1, r"refund", r"compensation", r"damages", r"reimburse(?:ment)?", r"penalty", r"owed?"),
    EVIDENCE: _cues(
        STRONG,
        r"receipts?", r"invoices?", r"screenshots?", r"recordings?", r"photos? of", r"pictures? of",
        r"bank statements?", r"payslips?", r"pay stubs?", r"chat (?:logs?|history)", r"text messages",
        r"emails? (?:from|to)", r"witness(?:es)?", r"written (?:notice|agreement|contract)", r"signed contract",
        r"(?:kept|saved|still have|have kept|have saved) (?:the|all the|copies of|a copy of)\s+\w+",
    )
    + _cues(1, r"evidence", r"proof", r"records?", r"contract", r"agreement", r"documents?", r"copy", r"copies"),
    LAW: (Cue(re.compile(r"\b[A-Z][A-Za-z]+(?: [A-Z][A-Za-z]+| of| and){0,6} Act\b"), 3),)
    + _cues(3, r"(?:section|article) \d+[a-z]?")
    + _cues(STRONG, r"statutes?", r"by law", r"under the law", r"legal(?:ly)? (?:right|obligation|basis|requirement)",
            r"regulations?", r"the code")
    + _cues(1, r"law", r"legal", r"rights?", r"obligations?", r"liable", r"clause"),
    ACTION: _cues(3, r"(?:i|we) (?:would )?(?:recommend|suggest|advise)", r"you should", r"next step")
    + _cues(
        STRONG,
        r"should", r"(?:plan|planning|going|intend|intending) to", r"need to", r"have to", r"make sure",
        r"as soon as possible", r"file (?:a|an) (?:complaint|claim|lawsuit|appeal)", r"consult (?:a|an)",
        r"send (?:a|an) (?:letter|notice|demand)", r"thinking (?:of|about) (?:going|getting|doing|trying)",
    )
    + _cues(1, r"will", r"gonna", r"complain", r"negotiate", r"mediation", r"arbitration", r"lawsuit", r"court"),
    FACT: _cues(
        STRONG,
        rf"{_I}\s+(?:just\s+|finally\s+|recently\s+|also\s+|already\s+|actually\s+)?(?:{_PAST})",
        rf"(?:he|she|they|my \w+|our \w+)\s+(?:just\s+|finally\s+|recently\s+)?(?:{_PAST})",
        r"(?:i|we) (?:have|had|'ve) been", r"(?:i've|we've) (?:been|got|had|done|made|started|finished)",
        r"(?:i|we) (?:work|live|study|teach|volunteer|run|own|have) (?:at|in|as|for|a|an|two|three)",
        r"(?:my|our) (?:husband|wife|partner|kids?|children|son|daughter|mom|mother|dad|father|family|friend|boss|landlord|employer)",
        r"refused", r"rejected", r"denied", r"broke down", r"stopped working",
    )
    + _cues(1, r"\w+ed", r"said", r"told", r"yesterday", r"ago", r"last"),
}

#: Lasting preferences ("from now on", "always") are never one-off requests.
LASTING_RE = re.compile(r"\b(?:from now on|in (?:the )?future|always|every time|usually|prefer|favou?rite)\b", re.IGNORECASE)

_INTERJECTION = (
    r"hi|hey|hello|hiya|yo|thanks|thank you|thank you so much|thanks so much|ty|ok|okay|k|sure|yes|yeah|yep|no|nope|"
    r"cool|great|awesome|nice|wow|whoa|lol|haha+|hehe+|omg|oh|ah|aw+|hmm+|um+|uh+|bye|goodbye|see you|see ya|"
    r"good morning|good night|good evening|good afternoon|take care|cheers|got it|sounds good|no problem|"
    r"you're welcome|of course|exactly|absolutely|totally|right|true|indeed|same|congrats|congratulations"
)
_PRAISE = r"great|awesome|cool|amazing|nice|lovely|wonderful|beautiful|sweet|fun|good|exciting|impressive|fantastic|incredible|so cool|so nice|so great"
CHITCHAT_RE = re.compile(
    rf"^(?:(?:{_INTERJECTION})(?:[\s,!.]+(?:{_INTERJECTION}))*(?:[\s,]+[A-Z][a-z]{{1,15}})?)$"
    rf"|^(?:(?:that|this|it)(?:'s|\s+is|\s+was|\s+sounds|\s+looks)|sounds|looks|how|so|what\s+an?)\s+"
    rf"(?:so\s+|really\s+|very\s+|super\s+|totally\s+|absolutely\s+)?(?:{_PRAISE})(?:\s+(?:idea|news|job|work))?(?:[\s,]+[A-Z][a-z]{{1,15}})?$"
    r"|^(?:i'm|i am) (?:so |really )?(?:glad|happy) (?:to hear (?:that|it)|for you)(?:[\s,]+[A-Z][a-z]{1,15})?$"
    r"|^(?:(?:hey|hi|hello)[\s,!]*)?(?:[A-Z][a-z]{1,15}[\s,!]+)?(?:i )?(?:hope (?:all'?s|all is|you'?re|you are|everything'?s|"
    r"everything is|you'?ve been|you have been) (?:good|well|ok|okay|great|fine|doing well)|how are you(?: doing)?|"
    r"how'?s it going|long time no see|(?:it'?s )?(?:so )?(?:good|great|nice) to (?:see|hear from) you)"
    r"(?:[\s,]+[A-Z][a-z]{1,15})?$"
    r"|^(?:can|could|would|will) you (?:please )?(?:help|summari[sz]e|explain|write|draft|translate|list|check)\b"
    r"|^(?:please )?(?:help me|summari[sz]e|explain|translate)\b"
    r"|^i (?:have|had|want to ask|wanted to ask) a (?:quick )?question\b"
    # a letter's sign-off alone ("Regards, Emily Zhao, HR Business Partner"): who wrote it, no fact
    r"|^[\"“'‘]?(?:(?:best|kind|warm|many)\s+)?(?:regards|wishes)\b[\s,]+(?:(?-i:[A-Z])[\w.'-]*[\s,]*){1,6}[\"”'’]?$"
    r"|^[\"“'‘]?(?:sincerely|yours (?:sincerely|faithfully|truly))\b",
    re.IGNORECASE,
)

#: A clause that asks rather than states although it has no question mark ("I wonder if …").
#: Sentences ending in "?" are handled by the engine before this is consulted.
QUESTION_RE = EN_QUESTION_RE  # legaltext.acts: the one reader of what a sentence asks

#: Openers that carry nothing ("Well, ", "Oh, by the way, ", "Haha, ").
FILLER_RE = re.compile(
    r"^(?:well|so|oh|ah|hey|hi|wow|haha+|lol|yeah|yes|um+|uh+|hmm+|anyway|anyways|by the way|btw|"
    r"honestly|basically|also|and|but|ok|okay|omg)\b[\s,!.:-]*",
    re.IGNORECASE,
)

#: Preference cues about how the assistant should answer.
ANSWER_STYLE_RE = re.compile(
    r"\b(?:answers?|repl(?:y|ies)|bullet|points?|brief|concise|short|conclusion|summary|plain english|detail(?:ed)?)\b",
    re.IGNORECASE,
)
