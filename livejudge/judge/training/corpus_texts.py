"""Texts the corpus's machine voices speak.

Two kinds, so that *content* does not become the label (a classifier must not learn "novel
sentences are human, customer-service replies are machine"):

* ``HUMAN_TRANSCRIPTS``: what the people in the human clips say (content-matched pairs: the
  same sentence spoken by a person and by every TTS voice);
* ``AGENT_REPLIES`` and ``CONVERSATIONAL``: assistant/agent replies and everyday conversational
  sentences, written for this corpus (no third-party text), which the TTS voices speak and
  which the human clips mostly do not (there are no human recordings of them to be had).

Keys are stable ids used in clip file names; never renumber them (clip ids would change).
"""

from __future__ import annotations

# Transcripts of the human clips whose words are known. Sources: pocketsphinx-testdata
# (librivox/transcription, cards/cards.transcription; livejudge/data/audio/README.md), the CMU
# ARCTIC prompt list (arctic_a0007, arctic_a0009), the ALSA speaker-test voice (its file names),
# TIDIGITS file name digits.
HUMAN_TRANSCRIPTS: dict[str, str] = {
    "austen_0870": "and mister john dashwood had then leisure to consider how much there might be "
                   "prudently in his power to do for them",
    "austen_0880": "he was not an ill disposed young man",
    "austen_0890": "unless to be rather cold hearted and rather selfish is to be ill disposed",
    "austen_0920": "had he married a more a amiable woman he might have been made still more "
                   "respectable than he was",
    "austen_0930": "he might even have been made amiable himself",
    "cards_001": "ten of clubs",
    "cards_002": "four queen of clubs",
    "cards_003": "seven of clubs",
    "cards_004": "five five",
    "cards_005": "eight of spades four of clubs seven of hearts",
    "goforward": "go forward ten meters",
    "arctic_a0007": "And you always want to see it in the superlative degree.",
    "arctic_a0009": "He turned sharply, and faced Gregson across the table.",
    "tidigits_2934z": "two nine three four zero",
    "alsa_front_center": "Front center",
    "alsa_front_left": "Front left",
    "alsa_rear_right": "Rear right",
}

# Assistant / voice-agent replies (written for this corpus; public domain dedication).
AGENT_REPLIES: dict[str, str] = {
    "reply_01": "Sure, I can help with that. What's the order number?",
    "reply_02": "Thanks for waiting. I found your booking for Friday at seven thirty.",
    "reply_03": "I'm sorry, I didn't catch that. Could you say it again?",
    "reply_04": "Your appointment is confirmed. You'll get a text message in a few minutes.",
    "reply_05": "Okay, let me check. One moment please.",
    "reply_06": "Great question! The store opens at nine in the morning and closes at eight.",
    "reply_07": "I understand how frustrating that must be. Let's get it sorted out.",
    "reply_08": "Your current balance is forty two dollars and fifteen cents.",
    "reply_09": "Would you like me to send the receipt to the email address on file?",
    "reply_10": "I can transfer you to a specialist, or I can try to answer it myself.",
    "reply_11": "The package left our warehouse yesterday and should arrive on Tuesday.",
    "reply_12": "Absolutely. I've updated your delivery address.",
    "reply_13": "Here are your options: a refund, a replacement, or store credit.",
    "reply_14": "It looks like your password was reset this morning. Was that you?",
    "reply_15": "No problem at all. Is there anything else I can help you with today?",
    "reply_16": "Let me read that back to you: two adults, one child, departing on the fourth.",
    "reply_17": "I'm an automated assistant, but I can connect you with a person if you prefer.",
    "reply_18": "The weather tomorrow looks sunny, with a high of twenty three degrees.",
    "reply_19": "I've added milk, eggs and bread to your shopping list.",
    "reply_20": "That's a really good point. Let me think about the best way to do it.",
    "reply_21": "Your flight is on time and boards from gate fourteen.",
    "reply_22": "To reset the router, hold the button on the back for ten seconds.",
    "reply_23": "I'm happy to help. First, can you confirm your date of birth?",
    "reply_24": "Sorry about the wait. Our lines are busier than usual today.",
    "reply_25": "Got it. I'll remind you at six o'clock this evening.",
    "reply_26": "You have three new messages and one missed call.",
    "reply_27": "The nearest pharmacy is about half a mile away, on Main Street.",
    "reply_28": "Of course! I'd recommend the blue one, it's more popular this season.",
    "reply_29": "I've cancelled the subscription. You won't be charged again.",
    "reply_30": "Just to be sure, did you say fifteen or fifty?",
}

# Everyday conversational sentences, fillers and backchannels (written for this corpus).
CONVERSATIONAL: dict[str, str] = {
    "conv_01": "Yeah, I think so, but I'm not totally sure.",
    "conv_02": "Hmm, that's interesting. I hadn't thought about it that way.",
    "conv_03": "Oh, right, right. I remember now.",
    "conv_04": "Well, we went there last summer and it was pretty crowded.",
    "conv_05": "I mean, it depends on how much time you have.",
    "conv_06": "Honestly, I'd rather stay home and watch a movie.",
    "conv_07": "Wait, what did you just say?",
    "conv_08": "Okay, okay. So what happens next?",
    "conv_09": "My sister lives near the station, so we usually meet there.",
    "conv_10": "It was, um, maybe three or four years ago.",
    "conv_11": "No, no, that's fine, don't worry about it.",
    "conv_12": "Can you hear me? The line is a bit noisy.",
    "conv_13": "Uh huh. Yeah. Sure.",
    "conv_14": "I'll call you back in five minutes, I'm just driving.",
    "conv_15": "That sounds great, let's do Thursday then.",
    "conv_16": "Sorry, I was distracted for a second. Go on.",
    "conv_17": "Actually, could you repeat the last part?",
    "conv_18": "We should probably leave before it starts raining.",
    "conv_19": "I don't know, it just didn't feel right to me.",
    "conv_20": "Thanks so much, you've been really helpful.",
}


def all_texts() -> dict[str, str]:
    """Every text the TTS voices may speak: id → sentence (ordered: transcripts, replies, conversation)."""
    return {**HUMAN_TRANSCRIPTS, **AGENT_REPLIES, **CONVERSATIONAL}


# Japanese sentences for the reserved Kokoro family's own-language renderings (written for this
# corpus: agent-style replies, the same meaning as reply_01, reply_05, reply_15, conv_15).
JAPANESE_TEXTS: dict[str, str] = {
    "ja_reply_01": "はい、お手伝いします。ご注文番号を教えていただけますか。",
    "ja_reply_05": "かしこまりました。少々お待ちください。",
    "ja_reply_15": "どういたしまして。ほかに何かお手伝いできることはありますか。",
    "ja_conv_15": "いいですね。それでは木曜日にしましょう。",
}


# Prompts of the Asterisk PBX core sounds (Debian asterisk-core-sounds-en, recorded by Allison
# Smith, CC-BY-SA-3.0; texts from its core-sounds-en.txt): the TTS voices speak them too, so the
# one human telephone-agent voice in the corpus has content-matched machine pairs.
# Key = "ast_" + prompt file name (with "/" → "__").
ASTERISK_TEXTS: dict[str, str] = {
    "ast_queue-youarenext": "Your call is now first in line and will be answered by the next available representative.",
    "ast_ss-noservice": "The number you have dialed is not in service. Please check the number and try again.",
    "ast_priv-introsaved": "Thank you. Please hold, while I attempt to connect you with your party!",
    "ast_followme__status": "the person you are calling is not at their desk; I will try to locate them for you",
    "ast_followme__sorry": "I'm sorry, but I was unable to locate the person you are calling",
    "ast_pbx-invalidpark": "I am sorry, there is no call parked on that extension.  Please try again.",
    "ast_vm-newuser": "Welcome to Comedian Mail. First, I will guide you through a short setup process.",
    "ast_vm-mismatch": "The passwords you entered and re-entered did not match.  Please try again.",
    "ast_vm-rec-temp": "After the tone, say your temporary message, and then press the pound key.",
    "ast_privacy-unident": "The party you are trying to reach does not accept unidentified calls.",
    "ast_dir-instr": "If this is the person you are looking for press 1 now, otherwise please press star now.",
    "ast_auth-incorrect": "Password incorrect.  Please enter your password followed by the pound key.",
}
