"""The acceptance page in Chinese: the criteria's generated sentences come out in Chinese."""

from django.urls import reverse

from tests.acceptance.factories import approved_offer, make_plan

ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}


def test_the_acceptance_page_words_the_criteria_in_chinese(browser_as, people, tariq):
    case, offer = approved_offer(people)
    plan = make_plan(tariq, offer)
    client = browser_as("tariq")
    url = reverse("acceptance:plan", kwargs={"pk": plan.pk})
    english = client.get(url).content.decode()
    assert "0 of 3 done" in english and "every health check passes" in english
    page = client.get(url, **ZH).content.decode()
    assert "已完成 0 次，共需 3 次" in page  # fault injections: 0 of 3 done
    assert "所有健康检查均通过" in page  # health checks: every health check passes
    assert "尚无正确性测试运行" in page  # core set: no correctness run yet
    for english_words in ("0 of 3 done", "every health check passes", "no correctness run yet"):
        assert english_words not in page
