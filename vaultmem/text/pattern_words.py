"""The words the sentence patterns know: tools and editors, diets, jobs, relations, pets,
and the terms of health and safety.

Shared with whatever else reads a sentence for them (names, kinds, the LLM extractor's slots),
which need the words without the detectors (`patterns`).
"""

from __future__ import annotations

import re

# Editors fill one slot (`editor`): a switch from one to another supersedes, where using
# two other tools (Git and Docker) does not.
EDITORS = ("VS Code", "VSCode", "Visual Studio Code", "Vim", "Neovim", "Emacs", "Sublime Text",
           "Sublime", "PyCharm", "IntelliJ", "WebStorm", "Xcode", "Atom", "Zed", "Cursor",
           "Notepad++", "Helix", "Android Studio", "Eclipse", "Visual Studio")
KNOWN_TOOLS = EDITORS + ("Python", "Obsidian", "Git", "GitHub",
               "GitLab", "Docker", "Kubernetes", "Notion", "Slack", "Excel", "Figma", "Photoshop",
               "ChatGPT", "Claude", "Linux", "Ubuntu", "macOS", "Windows", "iPhone", "Android",
               "PostgreSQL", "MySQL", "SQLite", "Rust", "Go", "JavaScript", "TypeScript", "React",
               "Zotero", "Anki", "Spotify", "Jira", "Trello", "Todoist", "Logseq", "Roam",
               "Evernote", "PyCharm", "IntelliJ", "Xcode", "Jupyter", "pandas", "Kotlin", "Java",
               "Swift", "Ruby", "Rails", "Django", "Flask", "FastAPI", "Zoom", "Teams", "WeChat",
               "微信", "飞书", "钉钉", "Word", "Keynote", "Lightroom", "Blender", "Unity", "Tableau")
KNOWN_TOOLS = tuple(dict.fromkeys(KNOWN_TOOLS))
# Diets fill one slot (`diet`) too: "on keto" then "on a Mediterranean diet" is a change.
DIETS = ("keto", "ketogenic", "paleo", "vegan", "vegetarian", "pescatarian", "Mediterranean",
         "low-carb", "low carb", "gluten-free", "whole30", "carnivore", "plant-based", "DASH",
         "low-fat", "low-sodium", "intermittent fasting", "Atkins")
JOBS = ("engineer", "developer", "programmer", "teacher", "nurse", "doctor", "physician",
        "lawyer", "designer", "artist", "writer", "student", "manager", "scientist", "researcher",
        "accountant", "chef", "cook", "counselor", "counsellor", "therapist", "consultant",
        "analyst", "architect", "photographer", "musician", "dentist", "pharmacist", "professor",
        "lecturer", "journalist", "editor", "librarian", "firefighter", "officer", "pilot",
        "mechanic", "electrician", "plumber", "carpenter", "farmer", "entrepreneur", "founder",
        "ceo", "cto", "barista", "waiter", "waitress", "cashier", "intern", "freelancer",
        "translator", "veterinarian", "vet", "worker", "paramedic", "soldier", "clerk",
        "secretary", "receptionist", "coach", "instructor", "tutor", "psychologist", "surgeon",
        "driver", "baker", "banker", "trader", "recruiter", "marketer", "illustrator", "actor",
        "actress", "dancer", "singer", "painter", "sculptor", "potter", "administrator",
        "technician", "specialist", "assistant", "director", "executive", "owner", "volunteer",
        "lead", "head", "supervisor", "partner", "associate")
RELATIONS = ("wife", "husband", "partner", "girlfriend", "boyfriend", "fiance", "fiancee",
              "son", "daughter", "kids", "kid", "children", "child", "mom", "mum", "mother",
              "dad", "father", "sister", "brother", "grandma", "grandmother", "grandpa",
              "grandfather", "aunt", "uncle", "cousin", "niece", "nephew", "parents", "baby")
PETS = ("dog", "cat", "puppy", "kitten", "pup", "parrot", "hamster", "rabbit", "bunny",
         "guinea pig", "fish", "horse", "bird", "turtle", "snake", "lizard")

# Health and safety (allergies, conditions, medication): such a memory weighs 0.9 and the
# context shows it whatever the question (`context.PINNED_TAG`).
HEALTH = re.compile(r"\ballerg(?:y|ies|ic)\b|\banaphyla|\bepipen\b|\bdiagnosed\b|\bdiabet|\basthma|\bepilep|"
                    r"\bblood (?:pressure|sugar)\b|\bcholesterol\b|\bmedications?\b|\bprescri(?:bed|ption)\b|"
                    r"\b(?:metformin|insulin|inhaler|statins?|antidepressants?|levothyroxine|warfarin)\b|"
                    r"\bintoleran(?:t|ce)\b|\bcoeliac\b|\bceliac\b|\bpregnan|"
                    r"过敏|血糖|血压|糖尿病|哮喘|癫痫|确诊|处方|吃药|用药|胆固醇|怀孕|不耐受", re.I)
