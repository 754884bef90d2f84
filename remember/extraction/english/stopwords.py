"""A vendored English stopword list for keywords (no download at run time).

The classic function-word list used by most IR toolkits (articles, pronouns,
auxiliaries, prepositions, conjunctions), plus the chat fillers and vague
verbs of everyday conversation ("really", "gonna", "thing") that never say
what a note is about.
"""

from __future__ import annotations

STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all almost along already also although always am among an and
    another any anybody anyone anything anyway anyways anywhere are aren't around as at away back be
    became because become been before being below beside besides best better between beyond both but
    by can can't cannot could couldn't did didn't do does doesn't doing don't done down during each
    either else enough etc even ever every everybody everyone everything everywhere few for from
    further get gets getting got gotten had hadn't has hasn't have haven't having he he'd he'll he's
    her here here's hers herself him himself his how how's however i i'd i'll i'm i've if in into is
    isn't it it'd it'll it's its itself just least less let let's like likely lot lots made make makes
    making many may maybe me might mine more most much must mustn't my myself near need needs neither
    never next no nobody none nor not nothing now of off often oh ok okay on once one ones only onto or
    other others otherwise ought our ours ourselves out over own per perhaps please quite rather
    really right said same say says see seem seemed seems several shall shan't she she'd she'll she's
    should shouldn't since so some somebody someone something sometimes somewhat somewhere soon still
    such sure than that that's the their theirs them themselves then there there's these they they'd
    they'll they're they've thing things think this those though through thus till to too toward
    towards under until up upon us very via want wanted was wasn't way we we'd we'll we're we've well
    were weren't what what's whatever when when's where where's whether which while who who's whom
    whose why why's will with within without won't would wouldn't yeah yes yet you you'd you'll
    you're you've your yours yourself yourselves
    gonna gotta wanna kinda sorta lol haha hey hi hello thanks thank wow cool great awesome nice
    amazing glad totally definitely actually probably guess mean know feel felt kind sort stuff
    day days time times today yesterday tomorrow week weeks month months year years ago last
    recently lately going went go goes come came take took tell told let lets try tried
    good bad new old big little lot able around thing user assistant
    """.split()
)
