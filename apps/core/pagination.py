"""The API's list pages: 50 rows unless the client asks for another size, at most 500."""

from rest_framework.pagination import PageNumberPagination


class BoundedPageNumberPagination(PageNumberPagination):
    """``?page_size=N`` within 1..500; a size that is not a positive number gives the default."""

    page_size_query_param = "page_size"
    max_page_size = 500
