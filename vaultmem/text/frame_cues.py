"""The cues of the home, work and title frames, in English and Chinese: the words that speak
of the attribute, read by the frames (`frames_en`, `frames_zh`) and by the read-time net
(`question_frames.speaks_of`).
"""

from __future__ import annotations

import re

HOME_CUE = re.compile(
    r"\b(?:live[sd]?|living|moved|move|moving|relocat\w*|settled|settling|based|resid\w+|unpack\w*|landlord|lease|"
    r"(?:new|our|my|the)\s+(?:\w+\s+)?(?:place|flat|apartment|apt|house|home|condo|neighbou?rhood)|"
    r"(?:flat|apartment|place|condo|house)\b(?=.{0,30}\bhome\b)|feels like home|here in|"
    r"(?:rental|renting|rent|lease)(?=.{0,25}\b(?:flat|apartment|apt|house|place|room|condo|townhouse)\b)|"
    r"(?:flat|apartment|apt|house|place|condo|townhouse)\s+(?:rental|lease)|"
    r"(?:have|'ve|has) been (?:in|living in)|(?:I'm|I am|we're|we are) (?:now )?in)\b", re.I)
ZH_HOME_CUE = re.compile(r"住在|住到|住进|住下|住了|住(?=[\u4e00-\u9fff]{2})|搬到|搬去|搬家|搬来|搬回|搬进|定居|落户|安家|安顿|新家|我们家在|我家在|租了.{0,6}房|"
                         r"买了.{0,6}房|房子在|常驻|base在|落脚")
WORK_CUE = re.compile(
    r"\b(?:work(?:s|ing|ed)?\s+(?:at|for)|join(?:ed|ing)?|hired|(?:started|starting|start)\s+(?:at|with)|"
    r"(?:new\s+)?job\s+(?:at|with)|offer\s+(?:from|at)|(?:first|second|third|last)\s+(?:day|week|month)\s+at|"
    r"(?:I'm|I am|I'm now|now that I'm|now I'm|we're)\s+(?:now\s+)?(?:at|over at|with)|employer|company|"
    r"left|quit|laid off|resigned from|leaving)\b", re.I)
ZH_WORK_CUE = re.compile(r"入职|跳槽|加入了|在.{2,12}(?:上班|工作|实习)|去.{2,12}(?:上班|工作)|新公司|离职|辞职|被裁|东家|报到|"
                         r"公司(?:正式)?(?:改名|更名)|在[\u4e00-\u9fffA-Za-z]{2,8}做")
_JOB_NOUNS = (r"engineer|developer|programmer|designer|manager|director|lead|head|analyst|scientist|researcher|"
              r"architect|consultant|teacher|nurse|doctor|lawyer|accountant|writer|editor|product owner|"
              r"vp|vice president|president|officer|specialist|coordinator|administrator|technician|"
              r"supervisor|principal|partner|associate|intern|founder|cto|ceo|cfo|coo|chef|pharmacist|"
              r"professor|lecturer|recruiter|strategist|producer|planner|advisor|adviser|counsel|paralegal|"
              r"librarian|therapist|physician|surgeon|resident|fellow|owner|marketer|salesperson|rep|tester")
TITLE = re.compile(rf"\b((?:(?:senior|junior|staff|principal|chief|lead|head|associate|assistant|deputy|"
                   rf"acting|interim|sr\.?|jr\.?|[A-Za-z-]+)\s+){{0,4}}(?:{_JOB_NOUNS})s?(?:\s+(?:of|for)\s+"
                   rf"(?!now\b)[A-Za-z&-]+(?:\s+(?!now\b|at\b|in\b)[A-Za-z&-]+)?)?)\b", re.I)
