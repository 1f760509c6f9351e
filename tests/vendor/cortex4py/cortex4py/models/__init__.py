from .organization import Organization
from .user import User
from .analyzer import Analyzer
from .analyzer_definition import AnalyzerDefinition
from .responder import Responder
from .responder_definition import ResponderDefinition
from .job import Job
from .job_artifact import JobArtifact
