"""Many calls: batch scoring on Ray (``ray_batch``), the judge as a Ray Serve service
(``service``) and its client for live sessions (``remote``; stdlib + numpy only).

Ray is an optional extra (``pip install 'livejudge[ray]'``); ``remote`` does not need it.
"""
