"""Plain words for the release report: what each check of the audit means
to someone who has not read the papers, what the key modes and row orders
mean, and the roles of columns.  One place, so the page and its tests use
the same sentences."""
from __future__ import annotations

__all__ = ["CHECKS", "KEY_MODES", "ROW_ORDERS", "ROLES", "check_words"]

#: What each check (the ``check`` column of an audit) makes sure of.
CHECKS = {
    "metadata": "The file's description holds no secret key or seed that would let someone "
                "undo the randomization, and the random generator is the strong one.",
    "model": "A privacy model is declared, so the parameters can be checked against it.",
    "domain": "Every published value belongs to the list of possible values, and that list "
              "was declared rather than read off the data (which would reveal which values "
              "occur).",
    "set_size": "Every published set holds as many values as the parameters say (eta), so no "
                "set is smaller, and easier to guess from, than promised.",
    "semantic": "Every published set holds values that are far enough apart in meaning "
                "(paper 001's (l, d)-semantic diversity), so the set does not narrow the "
                "truth down to similar values.",
    "parameters": "The published probabilities and set sizes are the ones the declared "
                  "privacy model requires.",
    "diversity": "In any group of records that look alike, no single value makes up more than "
                 "1/l of the group (l-diversity), so knowing someone's group does not tell "
                 "their value.",
    "anonymity": "Every group of records that look alike has at least k records "
                 "(k-anonymity).",
    "closeness": "In any group, the distribution of values stays within t of the whole "
                 "table's (t-closeness), so a group reveals little more than the table does.",
    "rows": "The original data given has exactly the published records.",
    "inclusion": "The true value is in its published set as often as the parameters say "
                 "(always, for the diversity models).",
    "classes": "Measured on the groups of sampled real records, no value makes up more than "
               "1/l of a group.",
    "attack_closeness": "No adversary's belief about a value moves further than t from the "
                        "population's distribution (Theorem 4 of paper 000).",
    "key": "How the randomness was keyed: a fresh key from the operating system cannot be "
           "guessed; a short research seed can, and then whoever guesses it re-runs the "
           "release (random sets: recovers every true value; groups: undoes their random "
           "row order and IDs).",
    "row_order": "Whether the order of the rows could give something away (for example, a "
                 "file sorted by age would give each row's age by its position).",
    "clear": "Whether an attribute is published in the clear: the set is just the true value.",
    "roles": "Which columns were published unchanged or exactly, as the publisher chose.",
    "identifier": "Whether a column published unchanged singles people out (most of its "
                  "values occur only once).",
    "repeat": "Whether the exact quasi-identifiers and the columns passed through single "
              "people out: then anyone who knows them finds a person's row in every release, "
              "and releases drawn with different keys, or under one key from a changed or "
              "reordered table, can be intersected (one key file and a record id for every "
              "release prevent it).",
    "passthrough_cells": "Whether a column published unchanged holds the original column's "
                         "values (with the original only): one whose cells were replaced, "
                         "by a sensitive column's values for example, is not what the other "
                         "checks of that column measured.",
    "recode": "Whether a column published unchanged nearly gives away a sensitive attribute "
              "(for example a code that maps one-to-one to a diagnosis).",
    "order_recode": "Whether the order of a column published unchanged nearly gives away a "
                    "sensitive attribute (for example a row number of a file sorted by it): "
                    "the sets of rows next to each other in that order intersect to their "
                    "value.",
    "set_recode": "Whether a column published unchanged (or two together) narrows a "
                  "sensitive attribute so far that the published set gives the value away "
                  "(for example the survey year and the birth year beside the age).",
    "rare": "Whether a domain read off the data, which tells that each of its values is "
            "someone's, holds a value so rare that it lies in fewer sets than l: then its "
            "holders are pointed at (a value in one set alone names its holder).",
    "given_away": "Whether some values of a column published unchanged give away a sensitive "
                  "attribute for many rows (for example a relationship 'Husband' gives the "
                  "sex), although the column as a whole predicts it less.",
    "attack": "A simulated adversary who has found the victim's row (random sets) or its "
              "class or bucket (LGB, msa) guesses the victim's value; this compares how often "
              "it is right with what the privacy model promises.",
    "epsilon": "Local differential privacy of the attribute's sets (smaller is stronger; "
               "infinite means no such guarantee, which is the case for every diversity "
               "model, where the true value is always in its set).",
    "groups": "Every group of records that share generalized quasi-identifiers has at least k "
              "records (k-anonymity).",
    "buckets": "Every bucket of sensitive values holds at least l different values, each at "
               "most once (l-diversity of the bucket).",
    "bucket_closeness": "The distribution of values in every bucket stays within t of all the "
                        "bucketized values' distribution (t-closeness of the bucket).",
    "classes_k": "Every equivalence class has at least k records (k-anonymity).",
    "bucket_tables": "The bucket tables written beside an LGB table (record IDs with their "
                     "buckets, each bucket's values) agree with what the table shows.",
    "shown_order": "An LGB bucket shows its values in a random order: a row shows its own "
                   "value about as often as chance gives (checked where the rows line up "
                   "with the original).",
    "columns": "The file holds only the columns its metadata describes (a column added "
               "afterwards is read by nobody, and may hold raw values).",
    "classes_qi": "Every equivalence class shows one generalized value of each "
                  "quasi-identifier on all its records (else its size protects nobody: the "
                  "records' own values single them out).",
    "groups_qi": "Every group shows one generalized value of each quasi-identifier cell on "
                 "all its records (else its size protects nobody: the records' own values "
                 "single them out).",
    "classes_t": "In every equivalence class, the distribution of each sensitive attribute "
                 "stays within t of the whole table's (t-closeness, Def. 4 of paper 003).",
    "record_ids": "Whether the record IDs could give something away (IDs in input order are "
                  "row numbers of the original file).",
    "l_distinct": "How many different values of each sensitive attribute the most uniform "
                  "equivalence class holds (for information: t-closeness sets no minimum).",
    "homogeneous": "Whether a class or bucket holds one value of a sensitive attribute alone: "
                   "then whoever finds a person's group knows their value.  t-closeness "
                   "allows it where the value is common; anonset avoids it unless the "
                   "publisher allowed it.",
    "suppressed": "Whether cells were published as '*' to make the rest l-diverse: a '*' tells "
                  "that the value is one held too often, and where one value dominates, that "
                  "value.",
    "series": "Columns of an earlier release of a persistent-key series that publishing "
              "could not measure beside this release's (the publisher named the risk): the "
              "series' sets link a record's rows across its releases.",
    "shared_id": "Whether several rows share an identifier's value: if they are one person's "
                 "rows (panel waves, visits), linking them narrows down the person's values.",
    "qi_recode": "Whether a quasi-identifier published exactly nearly gives away a sensitive "
                 "attribute.",
    "missing": "Whether rows with a missing answer were left out: a person known to be in the "
               "data but absent from the release is known to have left a question unanswered.",
    "utility": "Whether the utility figures recorded at publishing match the published table.",
}

#: Key modes (``info['key']``) in words.
KEY_MODES = {
    "os": "a fresh key from the operating system, never stored: nobody can re-run the "
          "randomization",
    "seed": "a secret of at least 128 bits given by the publisher (a seed, or a key file "
            "without a record id): reproducible; whoever knows it can recover every true "
            "value, so it must be kept as secret as the data",
    "research-seed": "a short research seed: reproducible and guessable; use only for data "
                     "that is not secret",
    "persistent": "a persistent key file: the same record gets the same sets in every release "
                  "for the values that did not change, so those add nothing up; a value that "
                  "changed between releases draws a fresh set, which the record's other sets "
                  "link to its old one, and whoever knows how it moved reads it off "
                  "(docs/security.md, section 0)",
}

#: Row orders in words.
ROW_ORDERS = {
    "shuffled": "a keyed random order, unrelated to the input order",
    "random": "a keyed random order, unrelated to the input order",
    "input": "the input order (a risk when the input was sorted or grouped by an attribute)",
}

#: Column roles in words.
ROLES = {
    "sensitive": "published as random sets",
    "exact": "quasi-identifier published exactly (paper 004)",
    "identifier": "identifier: never published",
    "identifiers": "identifier: never published",
    "other": "passed through unchanged",
    "drop": "dropped: never published",
    "qi": "quasi-identifier, generalized within groups",
    "quasi_identifier": "quasi-identifier, generalized within classes",
    "semi_sensitive": "semi-sensitive: bucketized where flagged, else generalized",
    "sensitive_bucketized": "sensitive, bucketized",
    "sensitive_clear": "sensitive, published as it is within its class",
    "semantic": "sensitive, published as sets of values far apart (paper 001)",
}


def check_words(check: str) -> str:
    """The plain-words meaning of a check (empty when unknown)."""
    return CHECKS.get(check, "")
