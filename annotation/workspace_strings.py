"""The workspace's interface text, translated on the server and handed to the JavaScript as JSON.

The widgets carry no message catalogue of their own: Django's ``ko`` catalogue covers them too, and
labels from the project's schema (topics, relations, DEPRELs, slots) are shown as the project wrote them.
"""

from __future__ import annotations

from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

#: Stage titles as the task types spell them (they are plain strings there, outside Django).
STAGE_TITLES = {
    "Label": gettext_lazy("Label"),
    "Write a hypothesis": gettext_lazy("Write a hypothesis"),
    "Validate": gettext_lazy("Validate"),
    "Write a question": gettext_lazy("Write a question"),
    "Answer the question": gettext_lazy("Answer the question"),
}


#: Task titles as the task types spell them (plain strings there too).
TASK_TITLES = {
    "Topic classification": gettext_lazy("Topic classification"),
    "Semantic textual similarity": gettext_lazy("Semantic textual similarity"),
    "Natural language inference": gettext_lazy("Natural language inference"),
    "Named entity recognition": gettext_lazy("Named entity recognition"),
    "Relation extraction": gettext_lazy("Relation extraction"),
    "Dependency parsing": gettext_lazy("Dependency parsing"),
    "Machine reading comprehension": gettext_lazy("Machine reading comprehension"),
    "Dialogue state tracking": gettext_lazy("Dialogue state tracking"),
}


def stage_title(title: str) -> str:
    return str(STAGE_TITLES.get(title, title))


def task_title(title: str) -> str:
    return str(TASK_TITLES.get(title, title))


def workspace_strings() -> dict[str, str]:
    """Every string the workspace and the eight widgets show, in the request's language."""
    return {
        # workspace
        "loading": _("Loading the next item…"),
        "done_all": _("Nothing left for you in this project. Thank you!"),
        "submit": _("Submit"),
        "skip": _("Skip"),
        "flag": _("Flag"),
        "saved": _("Saved. Here is the next item."),
        "draft_saved": _("Draft saved"),
        "draft_local": _("Draft kept in this browser (server not reachable)"),
        "draft_restored": _("Your unsaved work on this item was restored."),
        "offline_retry": _("Connection lost. Your answer is kept and will be sent again automatically."),
        "queue_busy": _("Many annotators are asking for items at this moment; asking again…"),
        "resent": _("A submission that had not reached the server was sent."),
        "error": _("Something went wrong: %(detail)s"),
        "invalid": _("Not submitted: %(detail)s"),
        "skipped": _("Skipped."),
        "flagged": _("Flagged. The item left your queue and goes to the manager's review."),
        "guideline_changed": _("A new guideline version was published. Please read it first."),
        "key_submit": _("submit"),
        "key_skip": _("skip (with an optional reason)"),
        "key_flag": _("flag the item"),
        "key_guideline": _("show or hide the guideline"),
        "key_accept": _("accept the model's suggestion as is and submit it"),
        "suggested_part": _("suggested"),
        "suggestion_banner": _("Pre-filled with a model's suggestion (%(model)s, confidence %(confidence)s). Check "
                               "every part: what you submit counts as your own answer."),
        "suggestion_accept": _("accepts it unchanged."),
        "first": _("1st"),
        "second": _("2nd"),
        "third": _("3rd"),
        "none": _("none"),
        "remove": _("Remove"),
        "selection": _("Selection"),
        # tc
        "tc_group": _("Topic"),
        "sts_group": _("Similarity score"),
        "nli_group": _("Relation"),
        "ner_group": _("Entity type"),
        "span_caret": _("Cursor before character %(n)s of %(total)s"),
        "span_selection": _("Selected: %(text)s (characters %(start)s to %(end)s)"),
        "tc_instruction": _("Choose the topic of the headline. Press a second or third number for optional "
                            "2nd and 3rd topics."),
        "tc_key_digits": _("choose a topic (again to remove it)"),
        "tc_key_backspace": _("remove the last choice"),
        "tc_need_first": _("choose at least the first topic"),
        # sts
        "sts_instruction": _("How similar are the meanings of the two sentences? 0 = unrelated, 5 = the same."),
        "sts_sentence1": _("Sentence 1"),
        "sts_sentence2": _("Sentence 2"),
        "sts_key_digits": _("set the score"),
        "sts_key_half": _("add half a point"),
        "sts_key_arrows": _("one step down / up"),
        "sts_need_score": _("choose a score"),
        # nli
        "nli_premise": _("Premise"),
        "nli_hypothesis": _("Hypothesis"),
        "nli_write_instruction": _("Write one hypothesis sentence that stands in this relation to the premise:"),
        "nli_choose_target": _("Choose the relation your hypothesis will have, then write it."),
        "nli_validate_instruction": _("What is the relation between the premise and the hypothesis?"),
        "nli_key_labels": _("choose the relation"),
        "nli_key_labels_alt": _("choose the relation while typing"),
        "nli_need_hypothesis": _("write a hypothesis"),
        "nli_need_label": _("choose a relation"),
        "nli_copy": _("the hypothesis copies the premise"),
        # ner
        "ner_instruction": _("Select characters with the mouse or with Shift+arrows, then press the number of "
                             "the entity type."),
        "ner_key_move": _("move the cursor / extend the selection"),
        "ner_key_types": _("label the selection with a type"),
        "ner_key_delete": _("delete the entity under the cursor"),
        "ner_key_adjust": _("move the end / the start of the entity under the cursor"),
        "ner_entities": _("Entities"),
        "ner_no_entities": _("No entities yet. A sentence without entities can be submitted as it is."),
        "ner_overlap": _("spans may not overlap"),
        "ner_select_first": _("select some characters first"),
        # re
        "re_subject": _("Subject"),
        "re_object": _("Object"),
        "re_instruction": _("Which relation does the sentence state between the subject and the object?"),
        "re_search": _("Search relations"),
        "re_key_search": _("search the relation list"),
        "re_key_updown": _("move in the list"),
        "re_key_enter": _("pick the highlighted relation"),
        "re_key_zero": _("no_relation"),
        "re_need_label": _("choose a relation"),
        "re_chosen": _("Chosen relation"),
        # dp
        "dp_instruction": _("For each eojeol choose its head (click the head token or type its number; 0 = root) "
                            "and its DEPREL."),
        "dp_token": _("Eojeol"),
        "dp_pos": _("POS"),
        "dp_head": _("Head"),
        "dp_deprel": _("DEPREL"),
        "dp_key_select": _("select the previous / next eojeol"),
        "dp_key_next": _("attach to the next eojeol"),
        "dp_key_root": _("make it the root"),
        "dp_key_head": _("type the head number"),
        "dp_key_deprel": _("type the DEPREL"),
        "dp_key_reset": _("attach every eojeol to the next one (head-final default)"),
        "dp_attach_next": _("Attach all to the next eojeol"),
        "dp_cycle": _("cycle through eojeol %(tokens)s"),
        "dp_roots": _("exactly one eojeol must be the root (head 0); now %(n)s"),
        "dp_bad_head": _("eojeol %(i)s: head must be a number from 0 to %(n)s, not itself"),
        "dp_bad_deprel": _("eojeol %(i)s: choose a DEPREL from the list"),
        "dp_root": _("root"),
        "dp_arcs": _("Dependency arcs, from each head to its dependents"),
        # mrc
        "mrc_passage": _("Passage"),
        "mrc_question": _("Question"),
        "mrc_question_type": _("Question type"),
        "mrc_write_instruction": _("Write a question about the passage, pick its type and select the answer in "
                                   "the passage."),
        "mrc_validate_instruction": _("Select the answer to the question in the passage, or mark it "
                                      "unanswerable."),
        "mrc_key_select": _("move in the passage / extend the selection"),
        "mrc_key_answer": _("use the selection as the answer (the plausible answer for type 3)"),
        "mrc_key_types": _("question type"),
        "mrc_key_unanswerable": _("unanswerable"),
        "mrc_answer": _("Answer"),
        "mrc_plausible": _("Plausible answer"),
        "mrc_unanswerable": _("Unanswerable"),
        "mrc_need_question": _("write a question"),
        "mrc_need_type": _("choose the question type"),
        "mrc_need_answer": _("select the answer in the passage"),
        "mrc_need_plausible": _("select the plausible (tempting but wrong) answer in the passage"),
        "mrc_need_answer_or_unanswerable": _("select the answer, or mark the question unanswerable"),
        # dst
        "dst_instruction": _("For each user turn, edit the cumulative dialogue state; it carries over from the "
                             "previous user turn."),
        "dst_turn": _("Turn %(n)s"),
        "dst_user": _("User"),
        "dst_system": _("System"),
        "dst_state": _("State after this turn"),
        "dst_domain": _("Domain"),
        "dst_slot": _("Slot"),
        "dst_value": _("Value"),
        "dst_add": _("Add"),
        "dst_empty_state": _("No slots yet."),
        "dst_key_turns": _("previous / next user turn"),
        "dst_key_add": _("add a slot (domain → slot → value, Enter to add)"),
        "dst_unknown_slot": _("unknown slot %(slot)s"),
        "dst_bad_value": _("%(value)s is not a value of %(slot)s"),
        "dst_carried": _("carried over from the previous turn"),
    }
