"""Who and where a Chinese sentence names (人名、地名、公司名), for the entity hubs.

Chinese has no capitals to find names by, so three precise signals are used, and nothing
is guessed from a word's shape alone:
- places and organisations from a list (cities and provinces, countries and their big
  cities, well-known companies), longest first ("杭州西湖" is 杭州 and 西湖);
- a person after a word that introduces one ("老板王磊", "同事张伟", "女儿糖糖", "叫小雨",
  "跟李娜"), taken as a surname and one or two characters, or a nickname (小雨, 阿杰, 糖糖);
- an organisation before 公司/集团/银行/医院/大学 that a work verb opens ("在星河科技公司上班").

    >>> zh_entities("我老板王磊让我下周去杭州出差。")
    ['王磊', '杭州']
    >>> zh_entities("我在腾讯上班，同事张伟人很好。")
    ['腾讯', '张伟']
"""

from __future__ import annotations

import re
from functools import cache

PLACES = """北京 上海 天津 重庆 广州 深圳 杭州 南京 苏州 成都 武汉 西安 长沙 郑州 济南 青岛 大连 沈阳
长春 哈尔滨 合肥 福州 厦门 南昌 南宁 昆明 贵阳 海口 三亚 兰州 西宁 银川 乌鲁木齐 拉萨 呼和浩特 石家庄
太原 宁波 温州 无锡 常州 东莞 佛山 珠海 中山 惠州 汕头 泉州 烟台 威海 徐州 扬州 绍兴 嘉兴 金华 台州
桂林 丽江 大理 西双版纳 张家界 黄山 九寨沟 洛阳 开封 香港 澳门 台北 高雄 台湾 莫干山 千岛湖 鼓浪屿
河北 山西 辽宁 吉林 黑龙江 江苏 浙江 安徽 福建 江西 山东 河南 湖北 湖南 广东 海南 四川 贵州 云南 陕西
甘肃 青海 内蒙古 广西 西藏 宁夏 新疆 东北 西湖 外滩 故宫 长城 滨江 浦东 朝阳 海淀 中关村 望京 陆家嘴
日本 东京 大阪 京都 北海道 冲绳 韩国 首尔 济州岛 泰国 曼谷 清迈 普吉岛 新加坡 马来西亚 吉隆坡 越南 印尼
巴厘岛 美国 纽约 旧金山 洛杉矶 西雅图 波士顿 芝加哥 硅谷 加拿大 温哥华 多伦多 英国 伦敦 法国 巴黎
德国 柏林 慕尼黑 意大利 罗马 米兰 西班牙 巴塞罗那 瑞士 荷兰 阿姆斯特丹 澳大利亚 悉尼 墨尔本 新西兰
迪拜 俄罗斯 莫斯科 冰岛 欧洲 东南亚""".split()
ORGANISATIONS = """阿里巴巴 阿里 腾讯 百度 字节跳动 字节 网易 华为 小米 京东 美团 拼多多 滴滴 比亚迪 蚂蚁集团
快手 哔哩哔哩 B站 小红书 携程 蔚来 理想汽车 小鹏 大疆 联想 中兴 海尔 格力 招商银行 工商银行 建设银行
中国银行 农业银行 中石油 中石化 国家电网 中国移动 中国联通 中国电信 顺丰 京东方 宁德时代 微软 谷歌
苹果公司 亚马逊 特斯拉 英伟达 清华 北大 复旦 浙大 交大 中科院 协和 华山医院 瑞金医院""".split()
# Words that bring a person's name in after them.
_INTRODUCERS = ("老板|领导|经理|主管|同事|朋友|好朋友|闺蜜|哥们|同学|室友|邻居|老师|教练|医生|"
                "老公|老婆|丈夫|妻子|男朋友|女朋友|男友|女友|对象|女儿|儿子|孩子|宝宝|弟弟|哥哥|姐姐|"
                "妹妹|表哥|表姐|表弟|表妹|堂哥|堂姐|侄子|侄女|外甥|客户|合伙人|导师|上司|下属")
SURNAMES = frozenset("""王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘
于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎
贺顾毛郝龚邵万钱严覃武戴莫孔向汤常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦
俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶
解牟艾尤阳时穆农司卓古吉缪简车项连芦麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞
姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖巩明佘池查麻苑迟邝""")
# A character that, after a surname and one given character, ends the name rather than
# continuing it: "张伟人很好" is 张伟 + 人很好, "王磊让我" is 王磊 + 让我.
_AFTER_NAME = set("让很说也都是在给和跟的了人去来把被对要会就还又刚已正这那呢吗吧啊呀，。！？、 ")
_FOLLOWS = re.compile(r"一起|一下|一直|一样|一般|今天|明天|昨天|前天|后天|今年|明年|去年|上周|下周|这周|周末|最近|现在|刚才")
_NICKNAME = re.compile(r"(?:小|阿|老)[\u4e00-\u9fff]|([\u4e00-\u9fff])\1")
_COMMON_WORDS = re.compile(r"周[末一二三四五六日围边]|同事|朋友|同学|孩子|家人|大家|别人|他们|她们|我们|你们|自己|一起|一下|一个|"
                           r"这个|那个|什么|怎么|今天|明天|昨天|老师|小时|小区|小孩|老家|阿姨|老人|小心|小学")
_DONE_WITH = re.compile(r"一起|一块|去|来|说|聊|见|吃|喝|玩|打|约|逛|视频|通话|出去|商量|吵|结婚|分手|在一起")
_ORG_SUFFIX = re.compile(r"(?:在|去|进了?|加入了?|入职了?|跳槽到了?)([^\W\d_我你他她它们的了是在去来说要会想愿就都也还]{2,8}?)"
                         r"(公司|集团|银行|医院|大学|学院|研究院|工作室|事务所)")


@cache
def _listed() -> re.Pattern:
    words = sorted(set(PLACES) | set(ORGANISATIONS), key=len, reverse=True)
    return re.compile("|".join(map(re.escape, words)))


def zh_entities(text: str) -> list[str]:
    """People, places and organisations a Chinese sentence names, in the order they come."""
    found: list[tuple[int, str]] = []
    for m in _listed().finditer(text):
        found.append((m.start(), m.group(0)))
    for m in re.finditer(rf"(?:{_INTRODUCERS}|叫|(?P<with>和|跟|找|约了?))(?=[\u4e00-\u9fff]{{2}})", text):
        name = person(text[m.end():m.end() + 5])
        # 和 and 跟 are mostly "and": a name after them is one when something is done with it
        if name and m.group("with") and not _DONE_WITH.match(text, m.end() + len(name)):
            continue
        if name:
            found.append((m.end(), name))
    for m in _ORG_SUFFIX.finditer(text):
        found.append((m.start(1), m.group(1) + m.group(2)))
    unique: list[str] = []
    for _, name in sorted(found):
        if name not in unique and not any(name in other for other in unique):
            unique = [u for u in unique if u not in name] + [name]
    return unique


def person(text: str) -> str | None:
    """The name `text` (what follows an introducing word) opens with, or None.

    >>> person("王磊让我"), person("张伟人很好"), person("糖糖今年"), person("周末去玩"), person("王小明，")
    ('王磊', '张伟', '糖糖', None, '王小明')
    """
    if _COMMON_WORDS.match(text) or text[:2] in PLACES or text[:2] in ORGANISATIONS:
        return None
    if _NICKNAME.match(text):
        return text[:2]
    if text[0] not in SURNAMES or not re.match(r"[\u4e00-\u9fff]{2}", text) or text[1] in _AFTER_NAME:
        return None
    if len(text) > 2 and "\u4e00" <= text[2] <= "\u9fff" and text[2] not in _AFTER_NAME \
            and not _FOLLOWS.match(text, 2):
        return text[:3]
    return text[:2]
